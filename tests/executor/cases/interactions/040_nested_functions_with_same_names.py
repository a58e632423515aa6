def a():
    def helper():
        return 'a-helper'
    return helper()
def b():
    def helper():
        return 'b-helper'
    return helper()
helper = lambda: 'global-helper'
(a(), b(), helper())
