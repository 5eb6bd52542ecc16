"""Argument mistakes in Python are one line naming the argument (package/_arguments.py): an
unknown keyword names the closest known one (the command line's rule), a first argument that
should be Params says what it got, and pybind11's signature dump does not reach the user."""
import unittest

import icl_theory as icl


class ArgumentErrors(unittest.TestCase):
    def one_line(self, fn, *args, **kwargs):
        with self.assertRaises(TypeError) as ctx:
            fn(*args, **kwargs)
        text = str(ctx.exception)
        self.assertEqual(len(text.splitlines()), 1, text)
        return text

    def test_unknown_keyword_names_the_closest(self):
        p = icl.Params()
        text = self.one_line(icl.optimize, p, "lambda", minimise="idg")
        self.assertIn("unexpected keyword argument 'minimise'", text)
        self.assertIn("did you mean 'minimize'?", text)
        text = self.one_line(icl.solve, p, methd="reduced")
        self.assertIn("did you mean 'method'?", text)
        text = self.one_line(icl.boundary, p, "rho", "alpha", [1, 2], quantiy="idg")
        self.assertIn("did you mean 'quantity'?", text)
        # **options functions: the library's keyword parser, the same one-line form.
        text = self.one_line(icl.simulate, p, D=40)
        self.assertIn("unexpected keyword argument 'D'", text)
        text = self.one_line(icl.simulate, p, sed=3)
        self.assertIn("did you mean 'seed'?", text)

    def test_params_argument_says_what_it_got(self):
        text = self.one_line(icl.solve, "alpha=2")
        self.assertIn("params must be an icl_theory.Params", text)
        self.assertIn("got str 'alpha=2'", text)
        self.one_line(icl.optimize, {"alpha": 2}, "lambda")

    def test_wrong_types_are_one_line_not_a_signature_dump(self):
        text = self.one_line(icl.optimize, icl.Params(), 3.0)
        self.assertIn("arguments of the wrong type", text)

    def test_correct_calls_are_unchanged(self):
        s = icl.solve(icl.Params(), method="reduced")
        self.assertTrue(s.converged)
        self.assertEqual(icl.solve.__name__, "solve")


if __name__ == "__main__":
    unittest.main()
