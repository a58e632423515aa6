print(len([]), len({}), len(set()), len(''), len((1,)), len({1: 2, 3: 4}), len(range(3, 9)))
print(bool([]), bool([[]]), any([0, '', None]), all([]), any([0, 1]), all([1, 0]))
len('héllo')
