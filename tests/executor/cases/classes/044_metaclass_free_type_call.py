Point = type('Point', (), {'x': 1, 'show': lambda self: 'Point ' + str(self.x)})
p = Point()
(p.show(), type(p).__name__)
