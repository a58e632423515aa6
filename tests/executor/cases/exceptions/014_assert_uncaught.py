# expect: native
values = [1, 2]
assert len(values) == 3, f'expected 3 values, got {len(values)}'
