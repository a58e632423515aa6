count = 0
class C:
    def bump(self):
        global count
        count += 1
        return count
C().bump()
C().bump()
count
