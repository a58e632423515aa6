class Default(dict):
    def __missing__(self, key):
        return key.upper()
d = Default(a=1)
(d['a'], d['zz'], 'zz' in d)
