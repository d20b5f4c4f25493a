// sys/epoll.h for the benchmark's follower pool (the Glibc module does not include it).
#ifndef CEPOLL_H
#define CEPOLL_H
#ifdef __linux__
#include <sys/epoll.h>
#endif
#endif
