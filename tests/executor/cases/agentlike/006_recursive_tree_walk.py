tree = {'name': 'root', 'size': 1, 'children': [
    {'name': 'a', 'size': 4, 'children': [{'name': 'a1', 'size': 2, 'children': []}]},
    {'name': 'b', 'size': 3, 'children': []}]}
def total(node):
    return node['size'] + sum(total(c) for c in node['children'])
def paths(node, prefix=''):
    here = prefix + '/' + node['name']
    yield here
    for c in node['children']:
        yield from paths(c, here)
def depth(node):
    return 1 + max((depth(c) for c in node['children']), default=0)
print(list(paths(tree)))
(total(tree), depth(tree))
