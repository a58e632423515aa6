import itertools
sales = [('north', 'q1', 10), ('north', 'q2', 15), ('south', 'q1', 7), ('south', 'q2', 3), ('east', 'q1', 8)]
sales.sort(key=lambda s: s[0])
summary = {region: sum(v for _, _, v in group) for region, group in itertools.groupby(sales, key=lambda s: s[0])}
pairs = list(itertools.combinations(sorted(summary), 2))
print(summary)
(pairs, list(itertools.accumulate(sorted(summary.values()))))
