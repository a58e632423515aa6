# imports: collections
# expect: refused Forbidden: ChainMaps nested more than 16 deep
# The ChainMap check looks into nested ChainMaps (pandas' DeepChainMap holds one); deeper than
# it looks is refused rather than let through unlooked at. 16 deep still works.
import collections
cm = {'a': 1}
for i in range(16):
    cm = collections.ChainMap(cm)
print(cm['a'])
for i in range(2):
    cm = collections.ChainMap(cm)
print(cm['a'])
