# expect: refused Names of tools and final_answer cannot be rebound
# Every binding form, in every scope: here an import alias inside a function, never run.
def f():
    import math as final_answer
    return final_answer
