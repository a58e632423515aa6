log = []
def f():
    try:
        try:
            return 'value'
        finally:
            log.append(1)
    finally:
        log.append(2)
(f(), log)
