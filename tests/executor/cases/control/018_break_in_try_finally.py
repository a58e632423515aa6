log = []
for i in range(3):
    try:
        if i == 1:
            break
        log.append(('body', i))
    finally:
        log.append(('finally', i))
log
