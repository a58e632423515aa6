data = {'users': [{'name': 'a', 'tags': ['x', 'y']}, {'name': 'b', 'tags': []}]}
data['users'][1]['tags'].append('z')
print(data)
print([u['name'] for u in data['users'] if u['tags']])
data
