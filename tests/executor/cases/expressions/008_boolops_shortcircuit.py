log = []
def t(v):
    log.append(v)
    return v
print(t(0) and t(1), log)
print(t(2) or t(3), log)
print(t('') or t([]) or t('x'), log)
print(None and 1, 0 or None, 1 and 2 and 3)
[] or {} or 0
