# expect: refused Names of tools and final_answer cannot be rebound: 'final_answer'
# A snippet that replaced final_answer could fake the end of a run for the agent driving it.
def final_answer(x):
    return x
