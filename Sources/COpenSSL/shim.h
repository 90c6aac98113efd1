#ifndef HERDR_COPENSSL_SHIM_H
#define HERDR_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#endif
