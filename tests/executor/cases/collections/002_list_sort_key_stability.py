people = [('bob', 25), ('amy', 30), ('cat', 25), ('dan', 30)]
print(sorted(people, key=lambda p: p[1]))
print(sorted(people, key=lambda p: (-p[1], p[0])))
people.sort(key=lambda p: p[0], reverse=True)
people
