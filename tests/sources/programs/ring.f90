! A Fortran OpenMP ring: thread t writes its block, barrier, reads the block
! of (t+1) mod 4, then the main thread prints the sum of the per-thread
! results. At granularity 8: raw[(t+1) mod 4][t] = 256 for each t, plus
! raw[t][0] = 1 for t = 1..3 (main reads sums(1, t) after the region).
program ring
  use omp_lib
  implicit none
  integer, parameter :: n = 256, nt = 4
  real(8), save :: block(n, 0:nt-1)
  real(8), save :: sums(8, 0:nt-1)
  integer :: t, k, r
  real(8) :: s
!$omp parallel num_threads(nt) private(t, k, r, s)
  t = omp_get_thread_num()
  do k = 1, n
    block(k, t) = k + t
  end do
!$omp barrier
  r = mod(t + 1, nt)
  s = 0
  do k = 1, n
    s = s + block(k, r)
  end do
  sums(1, t) = s
!$omp end parallel
  print *, sum(sums(1, :))
end program ring
