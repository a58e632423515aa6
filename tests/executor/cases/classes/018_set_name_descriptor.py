class Field:
    def __set_name__(self, owner, name):
        self.name = name
    def __get__(self, obj, owner):
        return 'field ' + self.name
class M:
    alpha = Field()
    beta = Field()
(M().alpha, M().beta)
