# expect: refused Forbidden access to dunder attribute: __class__
'{0.__class__}'.format(1)
