# expect: refused Forbidden function evaluation: '__import__'
__import__('os')
