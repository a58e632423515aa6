class Dog:
    species = 'canis'
    def __init__(self, name):
        self.name = name
    def speak(self):
        return self.name + ' says woof'
d = Dog('rex')
print(d.speak(), d.species, Dog.species, d.name)
d.species = 'own'
print(d.species, Dog.species)
Dog('a').speak()
