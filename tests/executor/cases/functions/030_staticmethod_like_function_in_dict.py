ops = {'add': lambda a, b: a + b, 'sub': lambda a, b: a - b}
[ops[k](10, 3) for k in sorted(ops)]
