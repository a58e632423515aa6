class P:
    def __repr__(self):
        return 'P()'
print(1, 2.0, 'three', [4], (5,), {6}, {'seven': 7}, None, True, P(), b'8', 9j, range(2), frozenset())
print(repr(''), str(''), end='|\n')
'printed'
