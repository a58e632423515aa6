# expect: native
isinstance(1, 'int')
