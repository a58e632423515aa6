log = []
def check(tag, result):
    log.append(tag)
    return result
match 5:
    case int(n) if check('g1', n > 10):
        pass
    case int(n) if check('g2', n > 1):
        log.append('matched second')
log
