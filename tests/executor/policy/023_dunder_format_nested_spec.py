# expect: refused Forbidden access to dunder attribute: __dict__
'{0:{1.__dict__}}'.format(1, 2)
