#!/usr/bin/env python3
"""Makes the .npy fixtures of tests/engine/tst_npy.cpp (run once; the files are committed).

Needs numpy (Debian: python3-numpy; the files here were made with numpy 1.24):
    cd tests/data/npy && /usr/bin/python3 make_fixtures.py

Values are simple formulas of the flat C-order index k, which tst_npy.cpp
recomputes:
    le_<code>.npy  shape (3, 4): signed ints k - 5, unsigned ints k,
                   floats k * 0.5 - 2.5, bool k % 3 == 0
    be_f4.npy      '>f4' shape (6,): k * 1.5 - 3
    be_i2.npy      '>i2' shape (6,): k * 1000 - 2500
    fortran2d.npy  '<f4' shape (3, 4), Fortran order: k
    fortran3d.npy  '<i4' shape (2, 3, 4), Fortran order: k
    fortran_be.npy '>i2' shape (3, 4), Fortran order: k - 5
    v2.npy         version 2.0, '<f8' shape (5,): k
    v3.npy         version 3.0, '<i4' shape (5,): k
    float4.npy     '<f4' shape (5, 4): k * 0.25   (a float4 buffer of shape [5])
    uchar4.npy     '|u1' shape (2, 3, 4): k * 10  (a uchar4 buffer of shape [2, 3])
    zerod.npy      '<f8' shape (): 3.5
    empty.npy      '<f4' shape (0, 4)
    object.npy     an object array (allow_pickle)
    structured.npy a structured dtype [('a', '<f4'), ('b', '<i4')]
    random_f8.npy  default_rng(7).standard_normal(16); random_f8.txt has the
                   same values as repr() text, one a line
    numpy_f4.npy   np.save of np.arange(7, dtype=np.float32) * 1.25
    numpy_i2.npy   np.save of np.arange(-6, 6, dtype=np.int16).reshape(3, 4)
"""

import numpy as np

SIGNED = ["i1", "i2", "i4", "i8"]
UNSIGNED = ["u1", "u2", "u4", "u8"]
FLOATS = ["f2", "f4", "f8"]


def main():
    k = np.arange(12).reshape(3, 4)
    for code in SIGNED:
        np.save(f"le_{code}.npy", (k - 5).astype("<" + code))
    for code in UNSIGNED:
        np.save(f"le_{code}.npy", k.astype("<" + code))
    for code in FLOATS:
        np.save(f"le_{code}.npy", (k * 0.5 - 2.5).astype("<" + code))
    np.save("le_b1.npy", k % 3 == 0)

    np.save("be_f4.npy", (np.arange(6) * 1.5 - 3).astype(">f4"))
    np.save("be_i2.npy", (np.arange(6) * 1000 - 2500).astype(">i2"))

    np.save("fortran2d.npy", np.asfortranarray(np.arange(12, dtype="<f4").reshape(3, 4)))
    np.save("fortran3d.npy", np.asfortranarray(np.arange(24, dtype="<i4").reshape(2, 3, 4)))
    np.save("fortran_be.npy", np.asfortranarray((np.arange(12) - 5).astype(">i2").reshape(3, 4)))

    with open("v2.npy", "wb") as f:
        np.lib.format.write_array(f, np.arange(5, dtype="<f8"), version=(2, 0))
    with open("v3.npy", "wb") as f:
        np.lib.format.write_array(f, np.arange(5, dtype="<i4"), version=(3, 0))

    np.save("float4.npy", (np.arange(20) * 0.25).astype("<f4").reshape(5, 4))
    np.save("uchar4.npy", (np.arange(24) * 10).astype("u1").reshape(2, 3, 4))
    np.save("zerod.npy", np.array(3.5, dtype="<f8"))
    np.save("empty.npy", np.zeros((0, 4), dtype="<f4"))
    np.save("object.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
    np.save("structured.npy", np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]))

    r = np.random.default_rng(7).standard_normal(16)
    np.save("random_f8.npy", r)
    with open("random_f8.txt", "w") as f:
        for v in r:
            f.write(repr(float(v)) + "\n")

    np.save("numpy_f4.npy", np.arange(7, dtype=np.float32) * np.float32(1.25))
    np.save("numpy_i2.npy", np.arange(-6, 6, dtype=np.int16).reshape(3, 4))


if __name__ == "__main__":
    main()
