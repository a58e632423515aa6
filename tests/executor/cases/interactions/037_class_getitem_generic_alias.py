class Box:
    def __class_getitem__(cls, item):
        return 'Box of ' + item.__name__
(Box[int], list[int], dict[str, int])
