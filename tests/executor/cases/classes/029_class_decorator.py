registry = []
def register(cls):
    registry.append(cls.__name__)
    cls.registered = True
    return cls
@register
class Plugin:
    pass
(registry, Plugin.registered)
