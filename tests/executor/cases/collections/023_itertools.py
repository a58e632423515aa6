import itertools
print(list(itertools.chain([1, 2], 'ab')), list(itertools.islice(itertools.count(10, 5), 3)))
print(list(itertools.permutations('abc', 2))[:4], list(itertools.combinations(range(4), 2)))
print(list(itertools.product('ab', repeat=2)), list(itertools.accumulate([1, 2, 3, 4])))
print([(k, list(g)) for k, g in itertools.groupby('aabbbc')])
print(list(itertools.zip_longest('ab', 'xyz', fillvalue='-')), list(itertools.repeat('r', 2)))
print(list(itertools.takewhile(lambda x: x < 3, [1, 2, 5, 1])), list(itertools.starmap(pow, [(2, 3), (3, 2)])))
list(itertools.compress('abcd', [1, 0, 1, 0]))
