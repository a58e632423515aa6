log = []
def t(name, v):
    log.append(name)
    return v
def f(a, b, c=0, *rest, d=0, **kw):
    return a + b + c + d + sum(rest)
print(f(t('a', 1), t('b', 2), t('c', 3), t('r', 4), d=t('d', 5), e=t('e', 6)))
log
