# imports: collections, json
# The neighbour of 288: ChainMaps of the snippet's own dicts, nested, subclassed, with maps
# that are no list, still work.
import collections, json
base = {'a': 1, 'b': 2}
cm = collections.ChainMap({'a': 10}, base)
child = cm.new_child({'c': 3})
print(cm['a'], cm['b'], child['c'], dict(child), child.parents['a'], len(child.maps))
class Deep(collections.ChainMap):
    pass
d = Deep(collections.ChainMap({'x': 1}), {'y': 2})
print(d['y'], sorted(d), type(d).__name__)
d.maps = ({'z': 0},)
print(d['z'], json.dumps(dict(cm)))
