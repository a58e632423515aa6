calls = []
def key(k):
    calls.append(k)
    return k
d = {}
d[key('a')] = d[key('b')] = key('v')
print(calls, d)
calls
