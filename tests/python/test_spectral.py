"""icl_theory: spectral measures, resolvent moments, integrate (run with unittest)."""
import math
import unittest

import numpy as np

import icl_theory as icl


def wishart_eigenvalues(p, n, seed, population=None):
    """Eigenvalues of (1/n) Sigma^1/2 X X^T Sigma^1/2, X p x n standard Gaussian."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((p, n))
    if population is not None:
        x = np.sqrt(population)[:, None] * x
    return np.linalg.eigvalsh(x @ x.T / n)


class MarchenkoPasturTest(unittest.TestCase):
    def test_stieltjes_matches_sampled_wishart(self):
        for ratio in (0.5, 2.0):
            p = 600
            n = int(p / ratio)
            lam = wishart_eigenvalues(p, n, seed=1)
            mp = icl.MarchenkoPastur(ratio)
            for z in (-0.5, -2.0):
                emp = np.mean(1.0 / (lam - z))
                self.assertLess(abs(mp.stieltjes(z) / emp - 1), 0.01, f"ratio {ratio} z {z}")
            z = 1.0 + 0.5j
            emp = np.mean(1.0 / (lam - z))
            self.assertLess(abs(mp.stieltjes(z) - emp) / abs(emp), 0.01, f"ratio {ratio} z {z}")
            # the conjugate half plane by symmetry
            self.assertAlmostEqual(mp.stieltjes(z.conjugate()), mp.stieltjes(z).conjugate())

    def test_support_atoms_density(self):
        mp = icl.MarchenkoPastur(2.0, scale=3.0)
        (lo, hi), = mp.support()
        self.assertAlmostEqual(lo, 3.0 * (1 - math.sqrt(2)) ** 2, places=12)
        self.assertAlmostEqual(hi, 3.0 * (1 + math.sqrt(2)) ** 2, places=12)
        (pos, mass), = mp.atoms()
        self.assertEqual(pos, 0.0)
        self.assertAlmostEqual(mass, 0.5, places=14)
        self.assertAlmostEqual(mp.continuous_mass(), 0.5, places=14)
        self.assertEqual(mp.ratio, 2.0)
        self.assertEqual(mp.scale, 3.0)
        x = np.linspace(lo, hi, 200001)
        dens = mp.density(x)  # vectorized
        self.assertEqual(dens.shape, x.shape)
        self.assertAlmostEqual(np.trapz(dens, x), 0.5, delta=2e-4)
        self.assertEqual(mp.density(hi + 1.0), 0.0)
        self.assertAlmostEqual(mp.raw_moment(1), 3.0, places=12)  # mean = scale

    def test_invalid_arguments(self):
        with self.assertRaises(ValueError):
            icl.MarchenkoPastur(-1.0)
        mp = icl.MarchenkoPastur(0.5)
        with self.assertRaisesRegex(ValueError, "z"):
            mp.stieltjes(1.0)  # inside the support
        with self.assertRaisesRegex(ValueError, "method"):
            icl.resolvent_moment(mp, -1.0, 0, 1, method="magic")


class ResolventMomentTest(unittest.TestCase):
    def test_quadrature_agrees_with_exact(self):
        for mu in (icl.MarchenkoPastur(0.5), icl.MarchenkoPastur(1.7, scale=0.6),
                   icl.GeneralizedMarchenkoPastur(0.4, [(0.5, 0.3), (2.0, 0.7)])):
            for z in (-0.3, -1.5):
                for k in range(4):
                    for j in range(4):
                        q = icl.resolvent_moment(mu, z, k, j)
                        e = icl.resolvent_moment(mu, z, k, j, method="exact")
                        self.assertTrue(math.isclose(q, e, rel_tol=1e-9, abs_tol=1e-12),
                                        f"{mu!r} z={z} k={k} j={j}: {q} vs {e}")

    def test_definition(self):
        mp = icl.MarchenkoPastur(0.5)
        z = -0.7
        self.assertAlmostEqual(icl.resolvent_moment(mp, z, 0, 1), mp.stieltjes(z), places=12)
        self.assertAlmostEqual(icl.resolvent_moment(mp, z, 1, 0), mp.raw_moment(1), places=12)
        self.assertAlmostEqual(icl.resolvent_moment(mp, z, 0, 2), mp.stieltjes_derivative(z, 1),
                               places=11)


class GeneralizedMarchenkoPasturTest(unittest.TestCase):
    def test_one_point_population_is_marchenko_pastur(self):
        g = icl.GeneralizedMarchenkoPastur(0.5, [(2.0, 1.0)])
        mp = icl.MarchenkoPastur(0.5, scale=2.0)
        for z in (-0.1, -1.0, -10.0):
            self.assertAlmostEqual(g.stieltjes(z), mp.stieltjes(z), delta=1e-10)
        self.assertEqual(g.population, [(2.0, 1.0)])
        self.assertAlmostEqual(g.support()[0][1], mp.support()[0][1], delta=1e-8)

    def test_two_point_population_matches_sampled(self):
        ratio, p = 0.25, 400
        pop = np.where(np.arange(p) < p // 2, 1.0, 4.0)
        lam = wishart_eigenvalues(p, int(p / ratio), seed=2, population=pop)
        g = icl.GeneralizedMarchenkoPastur(ratio, [(1.0, 0.5), (4.0, 0.5)])
        for z in (-0.5, -3.0):
            emp = np.mean(1.0 / (lam - z))
            self.assertLess(abs(g.stieltjes(z) / emp - 1), 0.01)  # measured ~1e-4; wrong weights 0.6/0.4 give 5-9%
        # well separated population: two support intervals, edges bracket the sample
        sup = g.support()
        self.assertEqual(len(sup), 2)
        self.assertLess(abs(lam.min() / sup[0][0] - 1), 0.05)
        self.assertLess(abs(lam.max() / sup[-1][1] - 1), 0.05)

    def test_point_mass_mixture(self):
        rho, kappa = 0.6, 1.5
        mix = icl.PointMassMixture(icl.MarchenkoPastur(rho / kappa, 1 / rho), rho,
                                   [(0.0, 1 - rho)])
        self.assertAlmostEqual(mix.continuous_mass(), rho, places=14)
        self.assertAlmostEqual(mix.raw_moment(1), 1.0, places=12)  # rho * (1/rho)


class IntegrateTest(unittest.TestCase):
    def test_moments_and_atoms(self):
        mp = icl.MarchenkoPastur(2.0)
        v, err = icl.integrate(mp, lambda x: 1.0)
        self.assertAlmostEqual(v, 1.0, delta=1e-9)
        self.assertGreaterEqual(err, 0.0)
        v, _ = icl.integrate(mp, lambda x: x * x)
        self.assertAlmostEqual(v, mp.raw_moment(2), delta=1e-9)
        v, _ = icl.integrate(mp, lambda x: math.exp(-x))
        lam = wishart_eigenvalues(500, 250, seed=3)
        self.assertLess(abs(v / np.mean(np.exp(-lam)) - 1), 0.02)

    def test_numerical_error_is_a_runtime_error(self):
        # a non-integrable integrand (pole inside the support) with a tiny GSL workspace
        with self.assertRaisesRegex(RuntimeError, "gsl_integration") as cm:
            icl.integrate(icl.MarchenkoPastur(0.5), lambda x: 1.0 / (x - 1.0) ** 3,
                          max_subintervals=5)
        self.assertIsInstance(cm.exception, icl.NumericalError)
        with self.assertRaises(icl.NumericalError):
            icl.integrate(icl.MarchenkoPastur(0.5), lambda x: float("nan"))

    def test_python_exception_propagates(self):
        def bad(x):
            raise ZeroDivisionError("inside the integrand")
        with self.assertRaisesRegex(ZeroDivisionError, "inside the integrand"):
            icl.integrate(icl.MarchenkoPastur(0.5), bad)


if __name__ == "__main__":
    unittest.main()
