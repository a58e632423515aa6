log = []
for i in range(3):
    try:
        if i == 1:
            continue
        log.append(i)
    finally:
        log.append('f%d' % i)
log
