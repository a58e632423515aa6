# expect: refused Forbidden access to dunder attribute: __dict__
'{0.__dict__}'.format(1)
