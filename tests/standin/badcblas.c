/*
 * A broken CBLAS, built only for tests as build/tests/libstandin-badcblas.so
 * and loaded with CT_CBLAS_LIB: its GEMMs read B as if it were transposed
 * (the mistake a wrong layout argument makes), so the cpu backend's result
 * check must fail the case instead of timing it. Row-major, no transposes,
 * as the backend calls it.
 */
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc);
void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc);

void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc) {
    (void)order; (void)ta; (void)tb; (void)ldb;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0;
            for (int p = 0; p < k; p++) s += a[i * lda + p] * b[(j * k + p) % (k * n)];
            c[i * ldc + j] = alpha * s + beta * c[i * ldc + j];
        }
}

void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc) {
    (void)order; (void)ta; (void)tb; (void)ldb;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int p = 0; p < k; p++) s += a[i * lda + p] * b[(j * k + p) % (k * n)];
            c[i * ldc + j] = alpha * s + beta * c[i * ldc + j];
        }
}
