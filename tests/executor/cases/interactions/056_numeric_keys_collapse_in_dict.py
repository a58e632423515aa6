d = {1: 'int', 1.0: 'float', True: 'bool'}
s = {0, 0.0, False, ''}
(d, len(s), {1: 'a'}[True], hash(1) == hash(1.0) == hash(True))
