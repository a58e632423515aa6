log = []
def t(v):
    log.append(v)
    return v
r = t('a') if t(0) else t('b')
(r, log)
