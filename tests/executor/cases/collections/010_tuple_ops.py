t = (1, 2, 3, 2)
print(t[1:], t.count(2), t.index(3), t + (4,), len(t), 2 in t, tuple('ab'), tuple([]))
single = (5,)
not_tuple = (5)
print(type(single).__name__, type(not_tuple).__name__)
t
