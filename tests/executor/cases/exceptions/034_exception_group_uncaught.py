# expect: native
raise ExceptionGroup('several', [ValueError('x'), KeyError('y')])
