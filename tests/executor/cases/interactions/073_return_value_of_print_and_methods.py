r1 = print('side effect')
lst = [3, 1]
r2 = lst.sort()
r3 = lst.append(5)
(r1, r2, r3, lst)
