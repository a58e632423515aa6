def run(x):
    log = []
    try:
        log.append('try')
        r = 10 / x
    except ZeroDivisionError:
        log.append('except')
    else:
        log.append('else %s' % r)
    finally:
        log.append('finally')
    return log
(run(2), run(0))
