{'list': [1, 2.5, 'three'], 'dict': {'inner': [True, None]}, 'tuple': (1, (2,)), 'empty': {}}
