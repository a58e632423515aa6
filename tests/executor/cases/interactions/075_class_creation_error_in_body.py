# expect: native
class Broken:
    value = undefined_at_class_time if False else [][3]
