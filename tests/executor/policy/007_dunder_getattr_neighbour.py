# expect: native
(getattr(1, 'real'), getattr(1, 'missing', 'default'), getattr('s', 'upper')())
