# expect: native
(hasattr(1, 'real'), hasattr(1, 'nope'), hasattr([], 'append'))
