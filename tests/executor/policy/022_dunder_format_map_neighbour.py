# expect: native
'{x.real} {y}'.format_map({'x': 2, 'y': 'z'})
