/* Python.h comes first, as CPython asks. */
// clang-format off
#include <Python.h>
// clang-format on

#include "zygote_python.h"

#include "exec.h"
#include "pf_log.h"
#include "warm_up.h"

/* Moves every object, the prebuilt environment included, to the permanent generation: the
 * workers' garbage collections then never walk (and copy) the pages they share with the
 * zygote. Without it workers are only slower, so a failure is logged and ignored. */
static void
freeze_heap(void)
{
    PyObject *gc = PyImport_ImportModule("gc");
    PyObject *r = gc ? PyObject_CallMethod(gc, "freeze", NULL) : NULL;
    Py_XDECREF(gc);
    if (!r) {
        pf_log_warning(ZYGOTE, "gc.freeze() failed, ignoring");
        PyErr_Clear();
    }
    Py_XDECREF(r);
}

static int
find_random(struct zygote_python *zp, struct pf_error **err)
{
    PyObject *name = PyUnicode_FromString("random");
    PyObject *random = name ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    if (!random) {
        if (PyErr_Occurred())
            goto fail;
        return 0; /* not loaded: a worker that imports it gets a fresh seed from the import */
    }
    PyObject *inst = PyObject_GetAttrString(random, "_inst");
    Py_DECREF(random);
    PyObject *base = PyImport_ImportModule("_random");
    PyObject *type = base ? PyObject_GetAttrString(base, "Random") : NULL;
    PyObject *seed = type ? PyObject_GetAttrString(type, "seed") : NULL;
    /* A snippet never ran here, but the seed method must be the C one, for that instance. */
    bool ok = inst && seed && PyType_Check(type) && PyObject_TypeCheck(inst, (PyTypeObject *) type);
    Py_XDECREF(base);
    Py_XDECREF(type);
    if (!ok) {
        Py_XDECREF(inst);
        Py_XDECREF(seed);
        goto fail;
    }
    /* Interned here, once: a worker that made the name would copy the pages it touched. */
    PyObject *gauss_next = PyUnicode_InternFromString("gauss_next");
    if (!gauss_next) {
        Py_DECREF(inst);
        Py_DECREF(seed);
        goto fail;
    }
    zp->random_inst = inst;
    zp->random_seed = seed;
    zp->gauss_next = gauss_next;
    return 0;
fail:
    PyErr_Clear();
    return pf_error_set(err, PF_E_INTERNAL,
                        "cannot find random._inst and _random.Random.seed to reseed workers");
}

/* numpy's legacy global generator (numpy.random.rand, shuffle, pandas' sample without a
 * random_state) is numpy.random.mtrand._rand, seeded once when numpy is imported: in the
 * zygote, so every worker would draw the same numbers. Its bound seed method reseeds it from the
 * kernel's random bytes when called without an argument. */
static int
find_numpy_random(struct zygote_python *zp, struct pf_error **err)
{
    PyObject *name = PyUnicode_FromString("numpy.random.mtrand");
    PyObject *mtrand = name ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    if (!mtrand && !PyErr_Occurred())
        return 0; /* not preloaded: an import in a worker seeds it afresh */
    PyObject *rand = mtrand ? PyObject_GetAttrString(mtrand, "_rand") : NULL;
    Py_XDECREF(mtrand);
    PyObject *seed = rand ? PyObject_GetAttrString(rand, "seed") : NULL;
    Py_XDECREF(rand);
    if (!seed || !PyCallable_Check(seed)) {
        Py_XDECREF(seed);
        PyErr_Clear();
        return pf_error_set(err, PF_E_INTERNAL,
                            "cannot find numpy.random.mtrand._rand.seed to reseed workers");
    }
    zp->numpy_seed = seed;
    return 0;
}

int
zygote_python_prepare(struct zygote_python *zp, struct pf_error **err)
{
    zp->random_inst = NULL;
    zp->random_seed = NULL;
    zp->gauss_next = NULL;
    zp->numpy_seed = NULL;
    zp->spare_env = NULL;
    zp->warm_env = NULL;
    if (find_random(zp, err) < 0 || find_numpy_random(zp, err) < 0 ||
        !(zp->spare_env = exec_env_prebuild(err)) || !(zp->warm_env = worker_warm_up_env_new(err)))
        return -1;
    freeze_heap();
    return 0;
}

static int
reseed_random(const struct zygote_python *zp, struct pf_error **err)
{
    if (!zp->random_inst)
        return 0;
    /* The C seed() with no argument reads the kernel's random bytes; random.Random.seed()
     * also drops the spare value gauss() keeps. */
    PyObject *r = PyObject_CallOneArg(zp->random_seed, zp->random_inst);
    if (!r || PyObject_SetAttr(zp->random_inst, zp->gauss_next, Py_None) < 0) {
        Py_XDECREF(r);
        PyErr_Clear();
        return pf_error_set(err, PF_E_INTERNAL, "cannot reseed the random module");
    }
    Py_DECREF(r);
    return 0;
}

static int
reseed_numpy(const struct zygote_python *zp, struct pf_error **err)
{
    if (!zp->numpy_seed)
        return 0;
    PyObject *r = PyObject_CallNoArgs(zp->numpy_seed);
    if (!r) {
        PyErr_Clear();
        return pf_error_set(err, PF_E_INTERNAL, "cannot reseed numpy's global generator");
    }
    Py_DECREF(r);
    return 0;
}

int
zygote_python_after_fork(const struct zygote_python *zp, struct pf_error **err)
{
    return reseed_random(zp, err) < 0 || reseed_numpy(zp, err) < 0 ? -1 : 0;
}

void
zygote_python_release(struct zygote_python *zp)
{
    Py_XDECREF((PyObject *) zp->random_inst);
    Py_XDECREF((PyObject *) zp->random_seed);
    Py_XDECREF((PyObject *) zp->gauss_next);
    zp->random_inst = NULL;
    zp->random_seed = NULL;
    zp->gauss_next = NULL;
    Py_XDECREF((PyObject *) zp->numpy_seed);
    zp->numpy_seed = NULL;
    zp->spare_env = exec_env_free(zp->spare_env);
    zp->warm_env = exec_env_free(zp->warm_env);
}
