/*
 * shapes.cc - C++ whose symbols are mangled: a method of a class in a
 * namespace, called through a function template.  Burns the CPU
 * milliseconds of its argument (default 100) in geo::Square::area.
 * Reports must show "geo::Square::area(int) const", or with
 * --no-demangle "_ZNK3geo6Square4areaEi".
 */
#include "burn.h"

volatile uint64_t sink;
uint64_t burn_ns = 100000000;

namespace geo {
struct Shape {
	virtual void area(int n) const = 0;
	virtual ~Shape() {}
};

struct Square : Shape {
	__attribute__((noinline)) void area(int n) const override
	{
		sink += (uint64_t)n;
		BURN();
	}
};

template <typename T>
__attribute__((noinline)) void measure(const T &shape, int n)
{
	shape.area(n);
	sink += 1;	/* not a tail call: measure stays on the stack */
}
} // namespace geo

int main(int argc, char **argv)
{
	geo::Square sq;

	if (argc > 1)
		burn_set_ms(argv[1]);
	geo::measure(sq, 3);
	return 0;
}
