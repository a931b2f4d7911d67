// MIT License - see LICENSE.
//
// Replaces the global operator new/delete of a test binary with one allocation function
// that the binary defines, test_allocation::allocate(size): it may count the allocation or
// throw std::bad_alloc to fail it. The SDK code linked into the binary (and libstdc++'s own
// allocations, std::thread's among them) then allocates through it. Include it in exactly one
// source file of the binary: these are the program's definitions of the operators. The
// nothrow forms are replaced too: under ASan, one left to the sanitizer would allocate memory
// that the replaced delete then frees with free() (an alloc-dealloc mismatch). The aligned
// forms are left alone, new and delete together.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace test_allocation
{
// Defined by the test binary. Returns memory from std::malloc (freed with std::free) or throws.
void* allocate(std::size_t size);
} // namespace test_allocation

void*
operator new(std::size_t size)
{
    return test_allocation::allocate(size);
}

void*
operator new[](std::size_t size)
{
    return test_allocation::allocate(size);
}

void
operator delete(void* memory) noexcept
{
    std::free(memory);
}

void
operator delete[](void* memory) noexcept
{
    std::free(memory);
}

void
operator delete(void* memory, std::size_t) noexcept
{
    std::free(memory);
}

void
operator delete[](void* memory, std::size_t) noexcept
{
    std::free(memory);
}

void*
operator new(std::size_t size, const std::nothrow_t&) noexcept
{
    try
    {
        return test_allocation::allocate(size);
    }
    catch(...)
    {
        return nullptr;
    }
}

void*
operator new[](std::size_t size, const std::nothrow_t&) noexcept
{
    try
    {
        return test_allocation::allocate(size);
    }
    catch(...)
    {
        return nullptr;
    }
}

void
operator delete(void* memory, const std::nothrow_t&) noexcept
{
    std::free(memory);
}

void
operator delete[](void* memory, const std::nothrow_t&) noexcept
{
    std::free(memory);
}
