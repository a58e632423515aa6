# expect: refused Import of pickle is not allowed
import pickle
